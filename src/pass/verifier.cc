#include <vector>

#include <fmt/format.h>

#include "qonnx/exec/executor.h"
#include "qonnx/pass/pass.h"

namespace qonnx::pass {

Status verify_graph(const ir::Model& model) {
  const ir::Graph& g = model.graph();
  std::vector<char> produced(g.value_count(), 0);  // by value id
  auto is_produced = [&](const ir::Value* v) { return produced[static_cast<size_t>(v->id())] != 0; };
  for (const auto& node : g.nodes()) {
    for (size_t k = 0; k < node->outputs().size(); ++k) {
      const ir::Value* v = node->outputs()[k];
      if (!v) continue;
      if (v->producer() != node.get() || v->producer_output() != static_cast<int>(k))
        return Status(Code::kFailed, fmt::format("output '{}' has a stale producer link", v->name())).with_context(node->describe());
      if (v->is_initializer())
        return Status(Code::kFailed, fmt::format("output '{}' is also an initializer", v->name())).with_context(node->describe());
      if (is_produced(v))
        return Status(Code::kFailed, fmt::format("'{}' is produced twice", v->name())).with_context(node->describe());
      produced[static_cast<size_t>(v->id())] = 1;
    }
  }
  std::vector<size_t> references(g.value_count(), 0);
  std::vector<char> checked(g.value_count(), 0);
  for (const auto& node : g.nodes()) {
    for (size_t k = 0; k < node->inputs().size(); ++k) {
      const ir::Value* v = node->inputs()[k];
      if (!v) continue;
      bool defined = is_produced(v) || v->is_initializer() || v->is_graph_input();
      if (!defined)
        return Status(Code::kFailed, fmt::format("input #{} '{}' is not defined", k, v->name())).with_context(node->describe());
      ++references[static_cast<size_t>(v->id())];
    }
  }
  // Use links: each one points at a node input holding the value, and there are as many as inputs.
  for (const auto& node : g.nodes())
    for (const ir::Value* v : node->inputs()) {
      if (!v || checked[static_cast<size_t>(v->id())]) continue;
      checked[static_cast<size_t>(v->id())] = 1;
      for (const auto& u : v->uses())
        if (u.node->input(static_cast<size_t>(u.input_index)) != v)
          return Status(Code::kFailed, fmt::format("'{}' has a stale use link", v->name())).with_context(u.node->describe());
      if (v->uses().size() != references[static_cast<size_t>(v->id())])
        return Status(Code::kFailed, fmt::format("'{}' is read {} times but has {} use links", v->name(),
                                                 references[static_cast<size_t>(v->id())], v->uses().size()));
    }
  for (const ir::Value* v : g.outputs())
    if (!is_produced(v) && !v->is_initializer() && !v->is_graph_input())
      return Status(Code::kFailed, fmt::format("graph output '{}' is never produced", v->name()));
  auto order = exec::topological_order(g);
  return order.is_ok() ? Status::ok() : std::move(order).status();
}

}  // namespace qonnx::pass
