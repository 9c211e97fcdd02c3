#include <set>

#include <fmt/format.h>

#include "qonnx/exec/executor.h"
#include "qonnx/pass/pass.h"

namespace qonnx::pass {

Status verify_graph(const ir::Model& model) {
  const ir::Graph& g = model.graph();
  std::set<const ir::Value*> produced;
  for (const auto& node : g.nodes()) {
    for (size_t k = 0; k < node->outputs().size(); ++k) {
      const ir::Value* v = node->outputs()[k];
      if (!v) continue;
      if (v->producer() != node.get() || v->producer_output() != static_cast<int>(k))
        return Status(Code::kFailed, fmt::format("output '{}' has a stale producer link", v->name())).with_context(node->describe());
      if (v->is_initializer())
        return Status(Code::kFailed, fmt::format("output '{}' is also an initializer", v->name())).with_context(node->describe());
      if (!produced.insert(v).second)
        return Status(Code::kFailed, fmt::format("'{}' is produced twice", v->name())).with_context(node->describe());
    }
  }
  for (const auto& node : g.nodes()) {
    for (size_t k = 0; k < node->inputs().size(); ++k) {
      const ir::Value* v = node->inputs()[k];
      if (!v) continue;
      bool defined = produced.count(v) || v->is_initializer() || v->is_graph_input();
      if (!defined)
        return Status(Code::kFailed, fmt::format("input #{} '{}' is not defined", k, v->name())).with_context(node->describe());
      bool has_use = false;
      for (const auto& u : v->uses()) has_use |= u.node == node.get() && u.input_index == static_cast<int>(k);
      if (!has_use)
        return Status(Code::kFailed, fmt::format("input #{} '{}' lacks its use link", k, v->name())).with_context(node->describe());
    }
  }
  for (const ir::Value* v : g.outputs())
    if (!produced.count(v) && !v->is_initializer() && !v->is_graph_input())
      return Status(Code::kFailed, fmt::format("graph output '{}' is never produced", v->name()));
  auto order = exec::topological_order(g);
  return order.is_ok() ? Status::ok() : std::move(order).status();
}

}  // namespace qonnx::pass
