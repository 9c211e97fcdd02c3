#include "passes/node_emitter.h"

namespace qonnx::passes {

NodeEmitter::NodeEmitter(ir::Graph& graph, ir::Node* replaced)
    : graph_(graph), replaced_(replaced), output_(replaced->output(0)) {
  base_ = !replaced->name().empty() ? replaced->name() : (output_ ? output_->name() : replaced->op_type());
}

Result<ir::Value*> NodeEmitter::constant(const std::string& suffix, const Tensor& value) {
  return graph_.add_initializer_tensor(graph_.unique_name(base_ + "_" + suffix), value);
}

Result<ir::Value*> NodeEmitter::op(const std::string& suffix, const std::string& op_type,
                                   const std::vector<ir::Value*>& inputs, const std::function<void(ir::Node&)>& attrs,
                                   const std::string& domain) {
  std::string name = graph_.unique_name(base_ + "_" + suffix);
  QONNX_ASSIGN_OR_RETURN(ir::Node* node, graph_.insert_node(replaced_, name, op_type, domain, inputs, {name}));
  if (attrs) attrs(*node);
  return node->output(0);
}

Status NodeEmitter::finish(const std::string& suffix, const std::string& op_type, const std::vector<ir::Value*>& inputs,
                           const std::function<void(ir::Node&)>& attrs, const std::string& domain) {
  if (!output_) return Status(Code::kInvalidModel, "the node has no output to replace").with_context(replaced_->describe());
  ir::Node* next = graph_.next_node(replaced_);
  graph_.remove_node(replaced_);
  auto node = graph_.insert_node(next, graph_.unique_name(base_ + "_" + suffix), op_type, domain, inputs, {output_->name()});
  if (!node.is_ok()) return std::move(node).status();
  if (attrs) attrs(*node.value());
  return Status::ok();
}

Status NodeEmitter::finish_with(ir::Value* value) {
  if (!output_) return Status(Code::kInvalidModel, "the node has no output to replace").with_context(replaced_->describe());
  // A graph output keeps its name: it is produced by an Identity of the value.
  if (output_->is_graph_output()) return finish("identity", "Identity", {value});
  graph_.remove_node(replaced_);
  graph_.replace_all_uses(output_, value);
  return Status::ok();
}

}  // namespace qonnx::passes
