#include "qonnx/exec/context_run.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>

#include <fmt/format.h>

#include "qonnx/exec/dtype_dispatch.h"
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

// Datatypes qonnx sanitizes: the integer ones (DataType.is_integer(): INTk, UINTk, BINARY, BIPOLAR,
// TERNARY). FIXED, FLOAT<e,m,b>, SCALEDINT and the floats are left as they are.
bool sanitized_datatype(const ir::FinnDataType& dt) {
  return dt.kind == ir::FinnDataType::Kind::kInteger || dt.kind == ir::FinnDataType::Kind::kBipolar ||
         dt.kind == ir::FinnDataType::Kind::kTernary;
}

// Rounds a float carrier half to even (np.round) when an element is not allowed; the largest change.
template <typename T, typename ToFloat, typename FromFloat>
std::optional<double> round_if_disallowed(const ir::FinnDataType& dt, Tensor& tensor, ToFloat to_float, FromFloat from_float) {
  const T* x = tensor.data<T>();
  const int64_t n = tensor.numel();
  if (std::all_of(x, x + n, [&](T v) { return dt.allows(static_cast<float>(to_float(v))); })) return std::nullopt;
  Tensor r = Tensor::uninitialized(tensor.dtype(), tensor.dims());
  T* y = r.data<T>();
  double max_error = 0;
  for (int64_t i = 0; i < n; ++i) {
    y[i] = from_float(std::nearbyint(static_cast<double>(to_float(x[i]))));
    const double error = std::fabs(static_cast<double>(to_float(x[i])) - static_cast<double>(to_float(y[i])));
    if (error > max_error) max_error = error;  // NaN never compares greater
  }
  tensor = std::move(r);
  return max_error;
}

// qonnx's sanitize_quant_values for one tensor: when an element is not allowed by the tensor's integer
// datatype annotation, every element is rounded half to even (np.round), unless that moves one by more
// than the error threshold. Integer carriers cannot change: a disallowed value is only reported.
Status sanitize(const ir::Graph& graph, const std::string& name, Tensor& tensor, double error_threshold,
                std::vector<std::pair<std::string, std::string>>& rounded) {
  const ir::FinnDataType dt = ir::tensor_datatype(graph, graph.find_value(name));
  if (!sanitized_datatype(dt)) return Status::ok();
  std::optional<double> error;
  Tensor before = tensor;
  switch (tensor.dtype()) {
    case DType::kFloat:
      error = round_if_disallowed<float>(dt, tensor, [](float v) { return v; }, [](double v) { return static_cast<float>(v); });
      break;
    case DType::kDouble:
      error = round_if_disallowed<double>(dt, tensor, [](double v) { return v; }, [](double v) { return v; });
      break;
    case DType::kFloat16:
      error = round_if_disallowed<uint16_t>(dt, tensor, [](uint16_t v) { return half_to_float(v); },
                                            [](double v) { return float_to_half(static_cast<float>(v)); });
      break;
    default:
      if (dtype_is_integer(tensor.dtype()))
        for (int64_t i = 0; i < tensor.numel() && !error; ++i)
          if (!dt.allows(static_cast<float>(element_as_double(tensor, i)))) error = 0.0;
      break;
  }
  if (!error) return Status::ok();
  if (*error > error_threshold) {
    tensor = std::move(before);
    return Status(Code::kMismatch,
                  fmt::format("tensor '{}': rounding to its datatype annotation {} moves a value by {:.6g}, more than "
                              "the error threshold {:.6g} (qonnx's ERROR_THRESH)",
                              name, dt.name, *error, error_threshold));
  }
  rounded.emplace_back(name, dt.name);
  return Status::ok();
}

}  // namespace

bool has_datatype_annotations(const ir::Graph& graph) {
  bool found = false;
  for_each_value(graph, [&](const ir::Value* v) {
    if (!found) found = sanitized_datatype(ir::tensor_datatype(graph, v));
  });
  return found;
}

Result<std::map<std::string, Tensor>> empty_context(const ir::Graph& graph) {
  std::map<std::string, Tensor> context;
  auto add_declared = [&](const std::string& name) {
    auto type = graph.declared_type(name);
    if (!type || type->dtype == DType::kUndefined || !dtype_known(static_cast<int32_t>(type->dtype))) return;
    Dims dims;
    for (int64_t d : type->dims) dims.push_back(std::max<int64_t>(d, 0));  // a symbolic dim reads as 0, as in qonnx
    context[name] = Tensor(type->dtype, dims);
  };
  for (const ir::Value* v : graph.inputs()) add_declared(v->name());
  for (const ir::Value* v : graph.outputs()) add_declared(v->name());
  for (const std::string& name : graph.value_info_names()) add_declared(name);
  for (const ir::Initializer& init : graph.initializers()) {
    QONNX_ASSIGN_OR_RETURN(Tensor t, graph.initializer_tensor(init.value));
    context[init.value->name()] = std::move(t);
  }
  return context;
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
    // Declared shapes bind where they are static (qonnx reads a symbolic dim as 0 and rejects any input).
    auto declared = graph.declared_type(name);
    const bool static_shape = declared && declared->has_shape &&
                              std::none_of(declared->dims.begin(), declared->dims.end(), [](int64_t d) { return d < 0; });
    if (static_shape && it->second.dims() != tensor.dims())
      return Status(Code::kUsage, fmt::format("shape mismatch for provided input '{}': given {}, the model declares {}",
                                              name, dims_to_string(tensor.dims()), dims_to_string(it->second.dims())));
    if (it->second.dtype() != tensor.dtype())
      return Status(Code::kUsage, fmt::format("provided input '{}' is {}, the model declares {}", name,
                                              dtype_name(tensor.dtype()), dtype_name(it->second.dtype())));
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
