// If, Loop and Scan: the executor runs their bodies (planned once) through KernelContext::run_body;
// these kernels only slice inputs, carry state and stack per-iteration outputs.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "kernels/common/attr_check.h"
#include "kernels/common/axis.h"
#include "kernels/onnx/onnx_kernels.h"

namespace qonnx::kernels {
namespace {

Result<bool> scalar_bool(const exec::KernelContext& ctx, size_t i, const char* what) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* t, ctx.required(i, what));
  if (t->dtype() != DType::kBool || t->numel() != 1)
    return ctx.input_error(Code::kInvalidModel, i, "{} must be a single bool, got {} {}", what, dtype_name(t->dtype()),
                           dims_to_string(t->dims()));
  return *static_cast<const uint8_t*>(t->raw()) != 0;
}

Status check_copyable(const Tensor& t) {
  if (t.dtype() == DType::kString) return Status(Code::kUnsupported, "string tensors cannot be scanned");
  return Status::ok();
}

// Sizes around `axis`: outer (dims before), extent, inner bytes (dims after times element size).
struct AxisSplit {
  int64_t outer = 1, extent = 1;
  size_t inner_bytes = 0;
};

AxisSplit split_at(const Dims& dims, size_t axis, DType dtype) {
  AxisSplit s;
  size_t inner = dtype_size(dtype);
  for (size_t d = 0; d < dims.size(); ++d) {
    if (d < axis) s.outer *= dims[d];
    else if (d == axis) s.extent = dims[d];
    else inner *= static_cast<size_t>(dims[d]);
  }
  s.inner_bytes = inner;
  return s;
}

// Element `index` of `t` along `axis`, the axis removed.
Tensor take_slice(const Tensor& t, size_t axis, int64_t index) {
  AxisSplit s = split_at(t.dims(), axis, t.dtype());
  Dims dims = t.dims();
  dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(axis));
  Tensor out(t.dtype(), dims);
  const auto* src = static_cast<const uint8_t*>(t.raw());
  auto* dst = static_cast<uint8_t*>(out.raw());
  for (int64_t o = 0; o < s.outer; ++o)
    std::memcpy(dst + static_cast<size_t>(o) * s.inner_bytes,
                src + static_cast<size_t>(o * s.extent + index) * s.inner_bytes, s.inner_bytes);
  return out;
}

// Stacks equally shaped tensors along a new axis `axis`.
Result<Tensor> stack(const std::vector<Tensor>& parts, size_t axis) {
  const Tensor& first = parts.front();
  if (!first.is_tensor()) return Status(Code::kInvalidModel, fmt::format("a {} value cannot be a scan output", first.type_string()));
  QONNX_RETURN_IF_ERROR(check_copyable(first));
  for (const Tensor& p : parts)
    if (!p.is_tensor() || p.dims() != first.dims() || p.dtype() != first.dtype())
      return Status(Code::kInvalidModel, fmt::format("per-iteration outputs differ: {} {} vs {} {}", dtype_name(first.dtype()),
                                                     dims_to_string(first.dims()), dtype_name(p.dtype()),
                                                     dims_to_string(p.dims())));
  if (axis > first.rank()) return Status(Code::kInvalidModel, fmt::format("output axis {} is out of range", axis));
  Dims dims = first.dims();
  dims.insert(dims.begin() + static_cast<std::ptrdiff_t>(axis), static_cast<int64_t>(parts.size()));
  Tensor out(first.dtype(), dims);
  AxisSplit s = split_at(dims, axis, first.dtype());
  auto* dst = static_cast<uint8_t*>(out.raw());
  for (int64_t o = 0; o < s.outer; ++o)
    for (size_t j = 0; j < parts.size(); ++j)
      std::memcpy(dst + static_cast<size_t>(o * s.extent + static_cast<int64_t>(j)) * s.inner_bytes,
                  static_cast<const uint8_t*>(parts[j].raw()) + static_cast<size_t>(o) * s.inner_bytes, s.inner_bytes);
  return out;
}

// The declared element types of the outputs of `node`'s body (float where not declared), read at
// plan time: a scan output of zero iterations is [0] of that type.
std::vector<DType> body_output_dtypes(const ir::Node& node) {
  std::vector<DType> dtypes;
  if (const ir::Graph* body = node.body("body")) {
    for (const auto* output : body->outputs()) {
      auto type = body->type_of(output);
      dtypes.push_back(type && type->dtype != DType::kUndefined ? type->dtype : DType::kFloat);
    }
  }
  return dtypes;
}

Tensor empty_scan_output(const std::vector<DType>& body_outputs, size_t body_output) {
  return Tensor(body_output < body_outputs.size() ? body_outputs[body_output] : DType::kFloat, {0});
}

Status if_kernel(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(bool cond, scalar_bool(ctx, 0, "cond"));
  QONNX_ASSIGN_OR_RETURN(std::vector<Tensor> outs, ctx.run_body(cond ? "then_branch" : "else_branch", {}));
  if (outs.size() != ctx.num_outputs())
    return ctx.error(Code::kInvalidModel, "branch '{}' returns {} values, the node has {} outputs",
                     cond ? "then_branch" : "else_branch", outs.size(), ctx.num_outputs());
  for (size_t k = 0; k < outs.size(); ++k) ctx.set_output(k, std::move(outs[k]));
  return Status::ok();
}

struct LoopAttrs {
  std::vector<DType> body_outputs;
};

Result<LoopAttrs> loop_attrs(const ir::Node& node, int64_t) { return LoopAttrs{body_output_dtypes(node)}; }

Status loop_kernel(exec::KernelContext& ctx, const LoopAttrs& attrs) {
  const Tensor* max_trip = ctx.input(0);
  int64_t trips = 0;
  if (max_trip) {
    if (max_trip->dtype() != DType::kInt64 || max_trip->numel() != 1)
      return ctx.input_error(Code::kInvalidModel, 0, "M must be a single int64");
    trips = max_trip->data<int64_t>()[0];
  }
  bool cond = true;
  if (ctx.input(1)) {
    QONNX_ASSIGN_OR_RETURN(cond, scalar_bool(ctx, 1, "cond"));
  }
  if (!max_trip && !ctx.input(1))
    return ctx.error(Code::kInvalidModel, "a Loop without M and without cond never ends");
  const size_t carried = ctx.num_inputs() < 2 ? 0 : ctx.num_inputs() - 2;
  if (ctx.num_outputs() < carried)
    return ctx.error(Code::kInvalidModel, "{} loop-carried values but only {} outputs", carried, ctx.num_outputs());
  const size_t scanned = ctx.num_outputs() - carried;
  std::vector<Tensor> state;
  for (size_t k = 0; k < carried; ++k) {
    QONNX_ASSIGN_OR_RETURN(const Tensor* t, ctx.required(2 + k, "v_initial"));
    state.push_back(*t);
  }
  std::vector<std::vector<Tensor>> scans(scanned);
  for (int64_t i = 0; (!max_trip || i < trips) && cond; ++i) {
    std::vector<Tensor> body_in{Tensor::scalar<int64_t>(DType::kInt64, i), Tensor::scalar<uint8_t>(DType::kBool, cond)};
    // A carried optional stays one: the body may return its value itself (Loop-16's optional carries).
    for (size_t k = 0; k < carried; ++k)
      body_in.push_back(ctx.input(2 + k)->is_optional() && !state[k].is_optional() ? Tensor::optional_of(state[k]) : state[k]);
    QONNX_ASSIGN_OR_RETURN(std::vector<Tensor> outs, ctx.run_body("body", body_in));
    if (outs.size() != 1 + carried + scanned)
      return ctx.error(Code::kInvalidModel, "the body returns {} values, expected 1 + {} + {}", outs.size(), carried, scanned);
    // Without a cond input the body's condition output is ignored (a for loop).
    if (ctx.input(1)) {
      if (outs[0].dtype() != DType::kBool || outs[0].numel() != 1)
        return ctx.error(Code::kInvalidModel, "the body's condition output must be a single bool");
      cond = *static_cast<const uint8_t*>(outs[0].raw()) != 0;
    }
    for (size_t k = 0; k < carried; ++k) state[k] = std::move(outs[1 + k]);
    for (size_t k = 0; k < scanned; ++k) scans[k].push_back(std::move(outs[1 + carried + k]));
  }
  for (size_t k = 0; k < carried; ++k) ctx.set_output(k, std::move(state[k]));
  for (size_t k = 0; k < scanned; ++k) {
    if (scans[k].empty()) {
      ctx.set_output(carried + k, empty_scan_output(attrs.body_outputs, 1 + carried + k));
      continue;
    }
    QONNX_ASSIGN_OR_RETURN(Tensor stacked, stack(scans[k], 0));
    ctx.set_output(carried + k, std::move(stacked));
  }
  return Status::ok();
}

// One Scan over `states` and `inputs` (time axis per input); returns final states then scan outputs.
struct ScanSpec {
  std::vector<int64_t> input_axes, input_reverse, output_axes, output_reverse;
  size_t scan_outputs = 0;
  const std::vector<DType>* body_outputs = nullptr;
};

Result<std::vector<Tensor>> scan_once(const exec::KernelContext& ctx, std::vector<Tensor> states,
                                      const std::vector<Tensor>& inputs, const ScanSpec& spec) {
  int64_t length = -1;
  std::vector<size_t> axes;
  for (size_t j = 0; j < inputs.size(); ++j) {
    QONNX_RETURN_IF_ERROR(check_copyable(inputs[j]));
    int64_t axis = j < spec.input_axes.size() ? spec.input_axes[j] : 0;
    int64_t normalized = 0;
    if (!normalize_axis(axis, static_cast<int64_t>(inputs[j].rank()), &normalized))
      return ctx.error(Code::kInvalidModel, "scan input #{} has no axis {}", j, axis);
    axes.push_back(static_cast<size_t>(normalized));
    int64_t extent = inputs[j].dim(static_cast<size_t>(normalized));
    if (length >= 0 && extent != length)
      return ctx.error(Code::kInvalidModel, "scan inputs have different lengths ({} and {})", length, extent);
    length = extent;
  }
  if (length < 0) return ctx.error(Code::kInvalidModel, "Scan needs at least one scan input");
  const size_t n_states = states.size();
  std::vector<std::vector<Tensor>> scans(spec.scan_outputs);
  for (int64_t t = 0; t < length; ++t) {
    std::vector<Tensor> body_in = states;
    for (size_t j = 0; j < inputs.size(); ++j) {
      bool reverse = j < spec.input_reverse.size() && spec.input_reverse[j] == 1;
      body_in.push_back(take_slice(inputs[j], axes[j], reverse ? length - 1 - t : t));
    }
    QONNX_ASSIGN_OR_RETURN(std::vector<Tensor> outs, ctx.run_body("body", body_in));
    if (outs.size() != n_states + spec.scan_outputs)
      return ctx.error(Code::kInvalidModel, "the body returns {} values, expected {} + {}", outs.size(), n_states,
                       spec.scan_outputs);
    for (size_t k = 0; k < n_states; ++k) states[k] = std::move(outs[k]);
    for (size_t k = 0; k < spec.scan_outputs; ++k) scans[k].push_back(std::move(outs[n_states + k]));
  }
  std::vector<Tensor> result = std::move(states);
  for (size_t k = 0; k < spec.scan_outputs; ++k) {
    if (scans[k].empty()) {
      result.push_back(empty_scan_output(*spec.body_outputs, n_states + k));
      continue;
    }
    if (k < spec.output_reverse.size() && spec.output_reverse[k] == 1) std::reverse(scans[k].begin(), scans[k].end());
    int64_t axis = k < spec.output_axes.size() ? spec.output_axes[k] : 0;
    int64_t normalized = 0;
    if (!normalize_axis(axis, static_cast<int64_t>(scans[k].front().rank()) + 1, &normalized))
      return ctx.error(Code::kInvalidModel, "scan output #{} has no axis {}", k, axis);
    QONNX_ASSIGN_OR_RETURN(Tensor stacked, stack(scans[k], static_cast<size_t>(normalized)));
    result.push_back(std::move(stacked));
  }
  return result;
}

// Scan's attributes, parsed once per node at plan time (Scan 8 has only `directions`, for its inputs).
struct ScanAttrs {
  int64_t num_scan_inputs;
  std::vector<int64_t> input_axes, input_directions, output_axes, output_directions;
  std::vector<DType> body_outputs;
};

Result<ScanAttrs> scan9_attrs(const ir::Node& node, int64_t) {
  ScanAttrs a;
  QONNX_ASSIGN_OR_RETURN(a.num_scan_inputs, int_attr(node, "num_scan_inputs", 0));
  QONNX_ASSIGN_OR_RETURN(a.input_axes, ints_attr(node, "scan_input_axes"));
  QONNX_ASSIGN_OR_RETURN(a.input_directions, ints_attr(node, "scan_input_directions"));
  QONNX_ASSIGN_OR_RETURN(a.output_axes, ints_attr(node, "scan_output_axes"));
  QONNX_ASSIGN_OR_RETURN(a.output_directions, ints_attr(node, "scan_output_directions"));
  a.body_outputs = body_output_dtypes(node);
  return a;
}

Result<ScanAttrs> scan8_attrs(const ir::Node& node, int64_t) {
  ScanAttrs a;
  QONNX_ASSIGN_OR_RETURN(a.num_scan_inputs, int_attr(node, "num_scan_inputs", 0));
  QONNX_ASSIGN_OR_RETURN(a.input_directions, ints_attr(node, "directions"));
  a.body_outputs = body_output_dtypes(node);
  return a;
}

// Scan 9+: inputs are the initial states, then num_scan_inputs scanned tensors.
Status scan9_kernel(exec::KernelContext& ctx, const ScanAttrs& attrs) {
  const int64_t n_scan = attrs.num_scan_inputs;
  if (n_scan <= 0 || static_cast<size_t>(n_scan) > ctx.num_inputs())
    return ctx.error(Code::kInvalidModel, "num_scan_inputs {} does not fit {} inputs", n_scan, ctx.num_inputs());
  const size_t n_states = ctx.num_inputs() - static_cast<size_t>(n_scan);
  if (ctx.num_outputs() < n_states) return ctx.error(Code::kInvalidModel, "fewer outputs than states");
  ScanSpec spec{attrs.input_axes, attrs.input_directions, attrs.output_axes, attrs.output_directions,
                ctx.num_outputs() - n_states, &attrs.body_outputs};
  std::vector<Tensor> states, inputs;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    QONNX_ASSIGN_OR_RETURN(const Tensor* t, ctx.required(i, i < n_states ? "initial state" : "scan input"));
    (i < n_states ? states : inputs).push_back(*t);
  }
  QONNX_ASSIGN_OR_RETURN(std::vector<Tensor> outs, scan_once(ctx, std::move(states), inputs, spec));
  for (size_t k = 0; k < outs.size(); ++k) ctx.set_output(k, std::move(outs[k]));
  return Status::ok();
}

// Scan 8: input 0 is sequence_lens, every tensor has a leading batch axis and scans along axis 1.
Status scan8_kernel(exec::KernelContext& ctx, const ScanAttrs& attrs) {
  const int64_t n_scan = attrs.num_scan_inputs;
  if (ctx.num_inputs() < 1 || n_scan <= 0 || static_cast<size_t>(n_scan) > ctx.num_inputs() - 1)
    return ctx.error(Code::kInvalidModel, "num_scan_inputs {} does not fit {} inputs", n_scan, ctx.num_inputs());
  const size_t n_states = ctx.num_inputs() - 1 - static_cast<size_t>(n_scan);
  if (ctx.num_outputs() < n_states) return ctx.error(Code::kInvalidModel, "fewer outputs than states");
  ScanSpec spec{{}, attrs.input_directions, {}, {}, ctx.num_outputs() - n_states, &attrs.body_outputs};
  std::vector<const Tensor*> all;
  int64_t batch = -1;
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    QONNX_ASSIGN_OR_RETURN(const Tensor* t, ctx.required(i, i <= n_states ? "initial state" : "scan input"));
    QONNX_RETURN_IF_ERROR(check_copyable(*t));
    if (t->rank() < (i <= n_states ? 1u : 2u) || (batch >= 0 && t->dim(0) != batch))
      return ctx.input_error(Code::kInvalidModel, i, "needs the batch axis shared by all inputs");
    batch = t->dim(0);
    all.push_back(t);
  }
  int64_t length = all[n_states]->dim(1);
  if (const Tensor* lens = ctx.input(0)) {
    bool full = lens->dtype() == DType::kInt32;
    for (int64_t b = 0; full && b < lens->numel(); ++b) full = lens->data<int32_t>()[b] == length;
    if (!full) return ctx.input_error(Code::kUnsupported, 0, "sequence_lens shorter than the scan length are not supported");
  }
  std::vector<std::vector<Tensor>> per_batch;
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Tensor> states, inputs;
    for (size_t i = 0; i < all.size(); ++i) (i < n_states ? states : inputs).push_back(take_slice(*all[i], 0, b));
    QONNX_ASSIGN_OR_RETURN(std::vector<Tensor> outs, scan_once(ctx, std::move(states), inputs, spec));
    per_batch.push_back(std::move(outs));
  }
  for (size_t k = 0; k < ctx.num_outputs(); ++k) {
    std::vector<Tensor> parts;
    for (auto& outs : per_batch) parts.push_back(std::move(outs[k]));
    if (parts.empty()) return ctx.error(Code::kUnsupported, "a Scan over an empty batch");
    QONNX_ASSIGN_OR_RETURN(Tensor stacked, stack(parts, 0));
    ctx.set_output(k, std::move(stacked));
  }
  return Status::ok();
}

}  // namespace

void register_control_flow_kernels(exec::KernelRegistry& r) {
  // If and Loop: later versions only widened the types.
  r.add("", "If", {1, exec::kNoUpperVersion}, if_kernel);
  // Loop-carried values may be sequences and optionals (Loop-13, -16).
  r.add("", "Loop", {1, exec::kNoUpperVersion}, exec::with_containers(exec::typed_kernel<LoopAttrs, loop_attrs, loop_kernel>()));
  r.add("", "Scan", {8, 8}, exec::typed_kernel<ScanAttrs, scan8_attrs, scan8_kernel>());
  r.add("", "Scan", {9, exec::kNoUpperVersion}, exec::typed_kernel<ScanAttrs, scan9_attrs, scan9_kernel>());
}

}  // namespace qonnx::kernels
