// Emits a chain of nodes that replaces one node in place: new nodes go just before it, and the last
// one takes over the replaced node's output value (same name, same finn_datatype annotation, same
// consumers). The replaced node stays readable until finish(); without finish() nothing is removed.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "qonnx/ir/model.h"
#include "qonnx/support/status.h"

namespace qonnx::passes {

class NodeEmitter {
 public:
  NodeEmitter(ir::Graph& graph, ir::Node* replaced);

  // A new initializer named "<base>_<suffix>".
  Result<ir::Value*> constant(const std::string& suffix, const Tensor& value);
  // A new node "<base>_<suffix>" with one output; `attrs` may set attributes.
  Result<ir::Value*> op(const std::string& suffix, const std::string& op_type, const std::vector<ir::Value*>& inputs,
                        const std::function<void(ir::Node&)>& attrs = nullptr, const std::string& domain = "");
  // Removes the replaced node; the final node's output is the replaced node's output.
  Status finish(const std::string& suffix, const std::string& op_type, const std::vector<ir::Value*>& inputs,
                const std::function<void(ir::Node&)>& attrs = nullptr, const std::string& domain = "");
  // Removes the replaced node; its consumers read `value` (an Identity keeps a graph output's name).
  Status finish_with(ir::Value* value);

 private:
  ir::Graph& graph_;
  ir::Node* replaced_;
  ir::Value* output_;
  std::string base_;
};

}  // namespace qonnx::passes
