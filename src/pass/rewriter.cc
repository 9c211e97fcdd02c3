#include "qonnx/pass/rewriter.h"

namespace qonnx::pass {

Rewriter::Rewriter(ir::Graph& graph, ir::Node* replaced)
    : graph_(graph), replaced_(replaced), output_(replaced->output(0)), describe_(replaced->describe()) {
  base_ = !replaced->name().empty() ? replaced->name() : (output_ ? output_->name() : replaced->op_type());
}

Rewriter::Rewriter(ir::Graph& graph, const std::vector<ir::Node*>& matched, std::string base)
    : graph_(graph), base_(std::move(base)) {
  ir::Node* last = matched.back();
  describe_ = last->describe();
  before_ = graph.next_node(last);
  output_ = last->output(0);
  // Consumers before producers: each removal leaves the remaining nodes' links intact.
  for (auto it = matched.rbegin(); it != matched.rend(); ++it) graph.remove_node(*it);
}

Result<ir::Value*> Rewriter::constant(const std::string& suffix, const Tensor& value) {
  return graph_.add_initializer_tensor(graph_.unique_name(base_ + "_" + suffix), value);
}

Result<ir::Value*> Rewriter::op(const std::string& suffix, const std::string& op_type,
                                const std::vector<ir::Value*>& inputs, const std::function<void(ir::Node&)>& attrs,
                                const std::string& domain) {
  std::string name = graph_.unique_name(base_ + "_" + suffix);
  const ir::Node* at = replaced_ ? replaced_ : before_;
  QONNX_ASSIGN_OR_RETURN(ir::Node* node, graph_.insert_node(at, name, op_type, domain, inputs, {name}));
  if (attrs) attrs(*node);
  return node->output(0);
}

Status Rewriter::finish(const std::string& suffix, const std::string& op_type, const std::vector<ir::Value*>& inputs,
                        const std::function<void(ir::Node&)>& attrs, const std::string& domain) {
  if (!output_) return Status(Code::kInvalidModel, "the node has no output to replace").with_context(describe_);
  const ir::Node* at = before_;
  if (replaced_) {
    at = graph_.next_node(replaced_);
    graph_.remove_node(replaced_);
    replaced_ = nullptr;
  }
  auto node = graph_.insert_node(at, graph_.unique_name(base_ + "_" + suffix), op_type, domain, inputs, {output_->name()});
  if (!node.is_ok()) return std::move(node).status();
  if (attrs) attrs(*node.value());
  return Status::ok();
}

Status Rewriter::finish_with(ir::Value* value) {
  if (!output_) return Status(Code::kInvalidModel, "the node has no output to replace").with_context(describe_);
  // A graph output keeps its name: it is produced by an Identity of the value.
  if (output_->is_graph_output()) return finish("identity", "Identity", {value});
  if (replaced_) {
    graph_.remove_node(replaced_);
    replaced_ = nullptr;
  }
  graph_.replace_all_uses(output_, value);
  return Status::ok();
}

}  // namespace qonnx::pass
