// Rewriter: replaces matched nodes by a chain of new ones, in place. New nodes and initializers are
// named "<base>_<suffix>" (made unique in the model), each node with one output of the same name; the
// chain's final node writes the matched output value (same name, annotations and consumers).
//
// - Rewriter(graph, node): the matched node stays in the graph (readable) until finish(); new nodes go
//   just before it; base = its name, else its output's name, else its op type.
// - Rewriter(graph, matched, base): a matched chain (each node feeding the next; the last one's output
//   0 is the result) is removed at once; new nodes go where the last one was.
// Without finish()/finish_with() a single-node rewrite removes nothing.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "qonnx/ir/model.h"
#include "qonnx/support/status.h"

namespace qonnx::pass {

class Rewriter {
 public:
  Rewriter(ir::Graph& graph, ir::Node* replaced);
  Rewriter(ir::Graph& graph, const std::vector<ir::Node*>& matched, std::string base);

  // A new initializer "<base>_<suffix>".
  Result<ir::Value*> constant(const std::string& suffix, const Tensor& value);
  // A new node "<base>_<suffix>" with one output; `attrs` may set attributes.
  Result<ir::Value*> op(const std::string& suffix, const std::string& op_type, const std::vector<ir::Value*>& inputs,
                        const std::function<void(ir::Node&)>& attrs = nullptr, const std::string& domain = "");
  // The final node "<base>_<suffix>": it writes the matched output (a single matched node is removed first).
  Status finish(const std::string& suffix, const std::string& op_type, const std::vector<ir::Value*>& inputs,
                const std::function<void(ir::Node&)>& attrs = nullptr, const std::string& domain = "");
  // The matched output's consumers read `value` instead (an Identity keeps a graph output's name).
  Status finish_with(ir::Value* value);

  const std::string& base() const { return base_; }

 private:
  ir::Graph& graph_;
  ir::Node* replaced_ = nullptr;      // single-node rewrite: the node, until finish
  const ir::Node* before_ = nullptr;  // chain rewrite: where new nodes go (nullptr: at the end)
  ir::Value* output_ = nullptr;
  std::string base_;
  std::string describe_;
};

}  // namespace qonnx::pass
