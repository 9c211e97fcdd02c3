#include "qonnx/exec/executor.h"

#include <algorithm>
#include <unordered_map>
#include <exception>
#include <new>

#include <fmt/format.h>


namespace qonnx::exec {

Result<std::vector<const ir::Node*>> topological_order(const ir::Graph& graph) {
  std::vector<const ir::Node*> nodes;
  for (const auto& n : graph.nodes()) nodes.push_back(n.get());
  // Kahn's algorithm, preferring stored order so a sorted graph runs as written.
  std::unordered_map<const ir::Node*, size_t> index;  // lookups only: no iteration order leaks
  for (size_t i = 0; i < nodes.size(); ++i) index[nodes[i]] = i;
  std::vector<int> pending(nodes.size(), 0);
  std::vector<std::vector<size_t>> consumers(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const ir::Value* v : nodes[i]->inputs()) {
      if (!v || !v->producer()) continue;
      consumers[index[v->producer()]].push_back(i);
      ++pending[i];
    }
  }
  std::vector<const ir::Node*> order;
  std::vector<size_t> ready;  // sorted descending: back() is the earliest stored node
  for (size_t i = nodes.size(); i-- > 0;)
    if (pending[i] == 0) ready.push_back(i);
  while (!ready.empty()) {
    size_t i = ready.back();
    ready.pop_back();
    order.push_back(nodes[i]);
    for (size_t c : consumers[i])
      if (--pending[c] == 0) ready.insert(std::upper_bound(ready.begin(), ready.end(), c, std::greater<size_t>()), c);
  }
  if (order.size() != nodes.size()) {
    for (size_t i = 0; i < nodes.size(); ++i)
      if (pending[i] > 0) return Status(Code::kInvalidModel, "the graph has a cycle").with_context(nodes[i]->describe());
  }
  return order;
}

Result<std::vector<Tensor>> invoke_kernel(KernelFn fn, const ir::Node& node, int64_t version,
                                         std::vector<const Tensor*> inputs, const TypeCheck& type_check) {
  // Kernels may be lenient about mixed types; a standard runtime is not, so neither is the executor.
  if (type_check) QONNX_RETURN_IF_ERROR(type_check(inputs, nullptr));
  KernelContext ctx(node, version, inputs);
  Status st;
  try {
    st = fn(ctx);
  } catch (const std::bad_alloc&) {
    st = Status(Code::kFailed, "out of memory");
  } catch (const std::exception& e) {
    st = Status(Code::kFailed, e.what());
  }
  if (!st.is_ok()) return std::move(st).with_context(node.describe());
  for (size_t k = 0; k < node.outputs().size(); ++k)
    if (node.outputs()[k] && !ctx.outputs()[k].defined())
      return Status(Code::kFailed, fmt::format("kernel produced no output #{}", k)).with_context(node.describe());
  // Outputs bind the same type parameters as the inputs (Div's Y is its A's type).
  if (type_check) QONNX_RETURN_IF_ERROR(type_check(inputs, &ctx.outputs()));
  return std::move(ctx.outputs());
}

Result<std::vector<Tensor>> evaluate_node(const ir::Model& model, const ir::Node& node,
                                          const std::vector<const Tensor*>& inputs, const KernelRegistry& registry) {
  int64_t version = model.op_version(node.domain());
  KernelFn fn = registry.find(node.domain(), node.op_type(), version);
  if (!fn) return registry.unsupported(node.domain(), node.op_type(), version).with_context(node.describe());
  return invoke_kernel(fn, node, version, inputs, registry.type_check(node, version));
}

Result<Executor> Executor::create(const ir::Model& model, const KernelRegistry& registry) {
  const ir::Graph& graph = model.graph();
  Executor ex;
  ex.model_ = &model;
  QONNX_ASSIGN_OR_RETURN(std::vector<const ir::Node*> order, topological_order(graph));

  ex.keep_.assign(graph.value_count(), false);
  for (const ir::Value* v : graph.outputs()) ex.keep_[static_cast<size_t>(v->id())] = true;
  std::vector<int> last_use(graph.value_count(), -1);
  for (size_t s = 0; s < order.size(); ++s) {
    const ir::Node* node = order[s];
    int64_t version = model.op_version(node->domain());
    KernelFn fn = registry.find(node->domain(), node->op_type(), version);
    if (!fn) return registry.unsupported(node->domain(), node->op_type(), version).with_context(node->describe());
    ex.steps_.push_back(Step{node, fn, version, registry.type_check(*node, version), {}});
    for (const ir::Value* v : node->inputs())
      if (v) last_use[static_cast<size_t>(v->id())] = static_cast<int>(s);
  }
  for (size_t id = 0; id < last_use.size(); ++id)
    if (last_use[id] >= 0) ex.steps_[static_cast<size_t>(last_use[id])].release.push_back(static_cast<int>(id));
  return ex;
}

Status Executor::expose(const std::vector<std::string>& names) {
  for (const auto& n : names) {
    const ir::Value* v = model_->graph().find_value(n);
    if (!v) return Status(Code::kUsage, fmt::format("no tensor named '{}' in the graph to expose", n));
    keep_[static_cast<size_t>(v->id())] = true;
    exposed_.push_back(n);
  }
  return Status::ok();
}

Status check_input_against_declared(const ir::Graph& graph, const ir::Value* input, const Tensor& tensor,
                                    bool check_shape) {
  auto type = graph.type_of(input);
  if (!type) return Status::ok();
  if (type->dtype != DType::kUndefined && type->dtype != tensor.dtype())
    return Status(Code::kInvalidModel, fmt::format("graph input '{}' is {}, got a {} tensor", input->name(),
                                                   dtype_name(type->dtype), dtype_name(tensor.dtype())));
  if (type->has_shape && check_shape) {
    bool ok = type->dims.size() == tensor.rank();
    for (size_t i = 0; ok && i < type->dims.size(); ++i)
      ok = type->dims[i] < 0 || type->dims[i] == tensor.dim(i);
    if (!ok) {
      std::vector<std::string> declared;
      for (size_t i = 0; i < type->dims.size(); ++i)
        declared.push_back(type->dims[i] >= 0 ? std::to_string(type->dims[i])
                                              : (type->dim_params[i].empty() ? "?" : type->dim_params[i]));
      return Status(Code::kInvalidModel, fmt::format("graph input '{}' has shape [{}], got {}", input->name(),
                                                     fmt::join(declared, ", "), dims_to_string(tensor.dims())));
    }
  }
  return Status::ok();
}

Result<RunResult> Executor::run(const std::map<std::string, Tensor>& inputs) const {
  const ir::Graph& graph = model_->graph();
  std::vector<Tensor> values(graph.value_count());
  std::vector<bool> present(graph.value_count(), false);

  for (const auto& init : graph.initializers()) {
    QONNX_ASSIGN_OR_RETURN(Tensor t, graph.initializer_tensor(init.value));
    values[static_cast<size_t>(init.value->id())] = std::move(t);
    present[static_cast<size_t>(init.value->id())] = true;
  }
  for (const auto& [name, tensor] : inputs) {
    const ir::Value* v = graph.find_value(name);
    if (!v || !v->is_graph_input())
      return Status(Code::kUsage, fmt::format("'{}' is not an input of the graph", name));
    QONNX_RETURN_IF_ERROR(check_input_against_declared(graph, v, tensor, check_input_shapes_));
    values[static_cast<size_t>(v->id())] = tensor;
    present[static_cast<size_t>(v->id())] = true;
  }
  for (const ir::Value* v : graph.runtime_inputs())
    if (!present[static_cast<size_t>(v->id())])
      return Status(Code::kUsage, fmt::format("graph input '{}' was not given", v->name()));

  for (const Step& step : steps_) {
    const ir::Node& node = *step.node;
    std::vector<const Tensor*> ins;
    for (size_t k = 0; k < node.inputs().size(); ++k) {
      const ir::Value* v = node.inputs()[k];
      if (!v) {
        ins.push_back(nullptr);
        continue;
      }
      if (!present[static_cast<size_t>(v->id())])
        return Status(Code::kInvalidModel, fmt::format("input #{} '{}' has no value", k, v->name()))
            .with_context(node.describe());
      ins.push_back(&values[static_cast<size_t>(v->id())]);
    }
    QONNX_ASSIGN_OR_RETURN(std::vector<Tensor> outs, invoke_kernel(step.fn, node, step.version, std::move(ins), step.type_check));
    for (size_t k = 0; k < node.outputs().size(); ++k) {
      const ir::Value* v = node.outputs()[k];
      if (!v) continue;
      values[static_cast<size_t>(v->id())] = std::move(outs[k]);
      present[static_cast<size_t>(v->id())] = true;
    }
    for (int id : step.release)
      if (!keep_[static_cast<size_t>(id)]) values[static_cast<size_t>(id)] = Tensor();
  }

  RunResult result;
  for (const ir::Value* v : graph.outputs()) {
    if (!present[static_cast<size_t>(v->id())])
      return Status(Code::kInvalidModel, fmt::format("graph output '{}' is never produced", v->name()));
    result.outputs.push_back(values[static_cast<size_t>(v->id())]);
  }
  for (const auto& n : exposed_) result.exposed[n] = values[static_cast<size_t>(graph.find_value(n)->id())];
  return result;
}

}  // namespace qonnx::exec
