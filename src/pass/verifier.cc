#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "qonnx/exec/executor.h"
#include "qonnx/io/model_io.h"
#include "qonnx/pass/pass.h"

namespace qonnx::pass {
namespace {

bool encloses(const ir::Graph* outer, const ir::Graph* g) {
  for (; g; g = g->parent())
    if (g == outer) return true;
  return false;
}

// Values of enclosing graphs that `node`'s bodies read, counted from the bodies themselves.
void collect_captures(const ir::Node& node, const ir::Graph& body, std::vector<const ir::Value*>& out) {
  auto note = [&](const ir::Value* v) {
    if (v && encloses(v->graph(), node.graph()) && std::find(out.begin(), out.end(), v) == out.end())
      out.push_back(v);
  };
  for (const auto& n : body.nodes()) {
    for (const ir::Value* v : n->inputs()) note(v);
    for (const auto& b : n->bodies()) collect_captures(node, *b.graph, out);
  }
  for (const ir::Value* v : body.outputs()) note(v);
}

Status verify_one(const ir::Graph& g) {
  std::vector<char> produced(g.value_count(), 0);  // by value id
  auto is_produced = [&](const ir::Value* v) { return produced[static_cast<size_t>(v->id())] != 0; };
  for (const auto& node : g.nodes()) {
    if (node->graph() != &g) return Status(Code::kFailed, "node has a stale graph link").with_context(node->describe());
    for (size_t k = 0; k < node->outputs().size(); ++k) {
      const ir::Value* v = node->outputs()[k];
      if (!v) continue;
      if (v->graph() != &g)
        return Status(Code::kFailed, fmt::format("output '{}' belongs to another graph", v->name())).with_context(node->describe());
      if (v->producer() != node.get() || v->producer_output() != static_cast<int>(k))
        return Status(Code::kFailed, fmt::format("output '{}' has a stale producer link", v->name())).with_context(node->describe());
      if (v->is_initializer())
        return Status(Code::kFailed, fmt::format("output '{}' is also an initializer", v->name())).with_context(node->describe());
      if (is_produced(v))
        return Status(Code::kFailed, fmt::format("'{}' is produced twice", v->name())).with_context(node->describe());
      produced[static_cast<size_t>(v->id())] = 1;
    }
  }
  // A value of an enclosing graph must be defined there (before the node holding this body: checked
  // by that graph's topological order, which counts implicit inputs).
  auto outer_defined = [&](const ir::Value* v) {
    return v->graph() != &g && encloses(v->graph(), &g) &&
           (v->producer() || v->is_initializer() || v->is_graph_input());
  };
  std::vector<size_t> references(g.value_count(), 0);
  std::vector<char> checked(g.value_count(), 0);
  for (const auto& node : g.nodes()) {
    for (size_t k = 0; k < node->inputs().size(); ++k) {
      const ir::Value* v = node->inputs()[k];
      if (!v) continue;
      if (v->graph() != &g) {
        if (!outer_defined(v))
          return Status(Code::kFailed, fmt::format("input #{} '{}' is not defined in this or an enclosing graph", k, v->name()))
              .with_context(node->describe());
        continue;
      }
      bool defined = is_produced(v) || v->is_initializer() || v->is_graph_input();
      if (!defined)
        return Status(Code::kFailed, fmt::format("input #{} '{}' is not defined", k, v->name())).with_context(node->describe());
      ++references[static_cast<size_t>(v->id())];
    }
    // Implicit inputs: exactly what the bodies read from outside themselves.
    std::vector<const ir::Value*> captured;
    for (const auto& b : node->bodies()) collect_captures(*node, *b.graph, captured);
    std::vector<ir::Value*> implicit = node->implicit_inputs();
    std::sort(captured.begin(), captured.end());
    std::sort(implicit.begin(), implicit.end());
    if (!std::equal(captured.begin(), captured.end(), implicit.begin(), implicit.end()))
      return Status(Code::kFailed, fmt::format("implicit inputs are stale ({} recorded, bodies read {})", implicit.size(),
                                               captured.size()))
          .with_context(node->describe());
    for (const ir::Value* v : implicit)
      if (v->graph() == &g) ++references[static_cast<size_t>(v->id())];
  }
  // Use links: each one points at a node input (or body) reading the value, and there are as many as readers.
  auto check_uses = [&](const ir::Value* v) -> Status {
    if (checked[static_cast<size_t>(v->id())]) return Status::ok();
    checked[static_cast<size_t>(v->id())] = 1;
    for (const auto& u : v->uses()) {
      bool ok = u.input_index == ir::kImplicitInput
                    ? [&] {
                        auto in = u.node->implicit_inputs();
                        return std::find(in.begin(), in.end(), v) != in.end();
                      }()
                    : u.node->input(static_cast<size_t>(u.input_index)) == v;
      if (!ok || u.node->graph() != &g)
        return Status(Code::kFailed, fmt::format("'{}' has a stale use link", v->name())).with_context(u.node->describe());
    }
    if (v->uses().size() != references[static_cast<size_t>(v->id())])
      return Status(Code::kFailed, fmt::format("'{}' is read {} times but has {} use links", v->name(),
                                               references[static_cast<size_t>(v->id())], v->uses().size()));
    return Status::ok();
  };
  for (const auto& node : g.nodes()) {
    for (const ir::Value* v : node->inputs())
      if (v && v->graph() == &g) QONNX_RETURN_IF_ERROR(check_uses(v));
    for (const ir::Value* v : node->implicit_inputs())
      if (v->graph() == &g) QONNX_RETURN_IF_ERROR(check_uses(v));
  }
  for (const ir::Value* v : g.outputs()) {
    if (v->graph() != &g) {
      if (!outer_defined(v)) return Status(Code::kFailed, fmt::format("graph output '{}' is not visible here", v->name()));
      continue;
    }
    if (!is_produced(v) && !v->is_initializer() && !v->is_graph_input())
      return Status(Code::kFailed, fmt::format("graph output '{}' is never produced", v->name()));
  }
  auto order = exec::topological_order(g);
  return order.is_ok() ? Status::ok() : std::move(order).status();
}

}  // namespace

Status verify_graph(const ir::Model& model) {
  Status status = io::check_model_rules(model);
  model.graph().visit_graphs([&](const ir::Graph& g) {
    if (!status.is_ok()) return;
    status = verify_one(g);
    if (!status.is_ok() && g.owner()) status.with_context("body of " + g.owner()->describe());
  });
  return status;
}

}  // namespace qonnx::pass
