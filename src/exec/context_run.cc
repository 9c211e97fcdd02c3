#include "qonnx/exec/context_run.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include <fmt/format.h>

#include "qonnx/exec/executor.h"
#include "qonnx/ir/finn_datatype.h"

namespace qonnx::exec {
namespace {

// Every value of the main graph a run can see: inputs, initializers, node outputs.
template <typename Fn>
void for_each_value(const ir::Graph& graph, Fn&& fn) {
  for (const ir::Value* v : graph.inputs()) fn(v);
  for (const ir::Initializer& init : graph.initializers()) fn(init.value);
  for (const auto& node : graph.nodes())
    for (const ir::Value* v : node->outputs())
      if (v) fn(v);
}

// qonnx's sanitize_quant_values for one tensor: when an element is not allowed by the tensor's
// datatype annotation, every element is rounded half to even (np.round), unless that moves one by
// more than the error threshold.
Status sanitize(const ir::Graph& graph, const std::string& name, Tensor& tensor, double error_threshold,
                std::vector<std::pair<std::string, std::string>>& rounded) {
  const ir::FinnDataType dt = ir::tensor_datatype(graph, graph.find_value(name));
  // Only float carriers hold values a datatype can reject; FLOAT32 is skipped as qonnx does.
  if (dt.kind == ir::FinnDataType::Kind::kFloat32 || tensor.dtype() != DType::kFloat) return Status::ok();
  const float* x = tensor.data<float>();
  const int64_t n = tensor.numel();
  if (std::all_of(x, x + n, [&](float v) { return dt.allows(v); })) return Status::ok();
  Tensor r = Tensor::uninitialized(DType::kFloat, tensor.dims());
  float* y = r.data<float>();
  double max_error = 0;
  for (int64_t i = 0; i < n; ++i) {
    y[i] = std::nearbyint(x[i]);
    const double error = std::fabs(static_cast<double>(x[i]) - y[i]);
    if (error > max_error) max_error = error;  // NaN never compares greater
  }
  if (max_error > error_threshold)
    return Status(Code::kMismatch,
                  fmt::format("tensor '{}': rounding to its datatype annotation {} moves a value by {:.6g}, more than "
                              "the error threshold {:.6g} (qonnx's ERROR_THRESH)",
                              name, dt.name, max_error, error_threshold));
  rounded.emplace_back(name, dt.name);
  tensor = std::move(r);
  return Status::ok();
}

// qonnx's make_empty_exec_context: zeros for declared values with static shapes, then initializers.
Result<std::map<std::string, Tensor>> empty_context(const ir::Graph& graph) {
  std::map<std::string, Tensor> context;
  auto add_declared = [&](const ir::Value* v) {
    auto type = graph.type_of(v);
    if (!type || !type->has_shape || !dtype_known(static_cast<int32_t>(type->dtype)) ||
        type->dtype == DType::kUndefined)
      return;
    if (std::any_of(type->dims.begin(), type->dims.end(), [](int64_t d) { return d < 0; })) return;
    context[v->name()] = Tensor(type->dtype, type->dims);
  };
  for (const ir::Value* v : graph.inputs()) add_declared(v);
  for (const ir::Value* v : graph.outputs()) add_declared(v);
  for (const std::string& name : graph.value_info_names())
    if (const ir::Value* v = graph.find_value(name)) add_declared(v);
  for (const ir::Initializer& init : graph.initializers()) {
    QONNX_ASSIGN_OR_RETURN(Tensor t, graph.initializer_tensor(init.value));
    context[init.value->name()] = std::move(t);
  }
  return context;
}

}  // namespace

bool has_datatype_annotations(const ir::Graph& graph) {
  bool found = false;
  for_each_value(graph, [&](const ir::Value* v) {
    if (found) return;
    const std::string dt = graph.finn_datatype(v->name());
    found = !dt.empty() && dt != "FLOAT32";
  });
  return found;
}

Result<ContextRunResult> run_in_context(const ir::Model& model, const std::map<std::string, Tensor>& given,
                                        const ContextRunOptions& options, const KernelRegistry& registry) {
  const ir::Graph& graph = model.graph();
  ContextRunResult result;
  QONNX_ASSIGN_OR_RETURN(result.context, empty_context(graph));
  for (const auto& [name, tensor] : given) {
    auto it = result.context.find(name);
    if (it == result.context.end()) {
      if (graph.find_value(name)) result.context[name] = tensor;  // qonnx ignores names it has no buffer for
      continue;
    }
    if (it->second.dims() != tensor.dims())
      return Status(Code::kUsage, fmt::format("shape mismatch for provided input '{}': given {}, the model declares {}",
                                              name, dims_to_string(tensor.dims()), dims_to_string(it->second.dims())));
    it->second = tensor;
  }
  const size_t count = graph.node_count();
  const size_t end = std::min(options.end, count);
  if (options.begin > end)
    return Status(Code::kUsage, fmt::format("start node {} comes after end node {}: no valid subgraph", options.begin, end - 1));
  auto node_it = std::next(graph.nodes().begin(), static_cast<std::ptrdiff_t>(options.begin));
  for (size_t index = options.begin; index < end; ++index, ++node_it) {
    const ir::Node& node = **node_it;
    if (!node.bodies().empty())
      return Status(Code::kUnsupported, fmt::format("{}: a node with a subgraph runs only in a whole-graph run without "
                                                    "datatype sanitizing", node.describe()));
    std::vector<const Tensor*> inputs;
    for (const ir::Value* v : node.inputs()) {
      if (!v) {
        inputs.push_back(nullptr);
        continue;
      }
      auto it = result.context.find(v->name());
      if (it == result.context.end())
        return Status(Code::kUsage, fmt::format("{}: input '{}' has no value: it is produced outside the nodes run; "
                                                "give it in the input dict", node.describe(), v->name()));
      if (options.sanitize)
        QONNX_RETURN_IF_ERROR(sanitize(graph, v->name(), it->second, options.error_threshold, result.rounded));
      inputs.push_back(&it->second);
    }
    auto outputs = evaluate_node(model, node, inputs, registry);
    if (!outputs.is_ok()) return std::move(outputs).status().with_context(node.describe());
    for (size_t k = 0; k < node.outputs().size() && k < outputs->size(); ++k) {
      const ir::Value* v = node.output(k);
      if (!v) continue;
      Tensor& slot = result.context[v->name()] = std::move((*outputs)[k]);
      if (options.sanitize) QONNX_RETURN_IF_ERROR(sanitize(graph, v->name(), slot, options.error_threshold, result.rounded));
    }
  }
  return result;
}

}  // namespace qonnx::exec
