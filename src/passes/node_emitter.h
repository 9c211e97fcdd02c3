// Emits a chain of nodes that replaces one node in place: the last emitted node takes over the
// replaced node's output value (same name, same finn_datatype annotation, same consumers).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "qonnx/ir/model.h"
#include "qonnx/support/status.h"

namespace qonnx::passes {

class NodeEmitter {
 public:
  // Removes `replaced`; new nodes go where it stood. Names derive from its name.
  NodeEmitter(ir::Graph& graph, ir::Node* replaced);

  // A new initializer named "<base>_<suffix>".
  Result<ir::Value*> constant(const std::string& suffix, const Tensor& value);
  // A new node "<base>_<suffix>" with one output; `attrs` may set attributes.
  Result<ir::Value*> op(const std::string& suffix, const std::string& op_type, const std::vector<ir::Value*>& inputs,
                        const std::function<void(ir::Node&)>& attrs = nullptr, const std::string& domain = "");
  // The final node: its output is the replaced node's output.
  Status finish(const std::string& suffix, const std::string& op_type, const std::vector<ir::Value*>& inputs,
                const std::function<void(ir::Node&)>& attrs = nullptr, const std::string& domain = "");
  // Or: every consumer of the replaced output reads `value` (an Identity keeps a graph output's name).
  Status finish_with(ir::Value* value);

 private:
  ir::Graph& graph_;
  ir::Node* before_;
  ir::Value* output_;
  std::string base_;
};

}  // namespace qonnx::passes
