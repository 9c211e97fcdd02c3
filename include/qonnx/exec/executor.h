// Executes a model with the registry kernels: plans once (topological order, kernel lookup and
// prepared attributes, initializers decoded and constant subgraphs run once, last use of every value
// so buffers are released early or reused in place), then runs any number of input sets.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "qonnx/exec/buffer_pool.h"
#include "qonnx/exec/kernel.h"
#include "qonnx/ir/model.h"
#include "qonnx/support/status.h"
#include "qonnx/tensor.h"

namespace qonnx::exec {

struct RunResult {
  std::vector<Tensor> outputs;           // graph-output order
  std::map<std::string, Tensor> exposed;  // requested intermediate values
};

class Executor {
 public:
  // The model must outlive the executor.
  static Result<Executor> create(const ir::Model& model, const KernelRegistry& registry = KernelRegistry::global());
  // The same with the arithmetic of quantized layers chosen (create above: Arithmetic::kInt).
  static Result<Executor> create(const ir::Model& model, Arithmetic arithmetic,
                                 const KernelRegistry& registry = KernelRegistry::global());

  Arithmetic arithmetic() const { return arithmetic_; }
  // For every step of the main graph whose kernel chose between paths: the node's description and the
  // kernel's note ("integer: ..." or "float: ..."), in run order.
  std::vector<std::pair<std::string, std::string>> path_notes() const;
  // Empty, or why and how much the plan streams: the weights it would hold exceed what --max-memory leaves
  // for them, so the layers whose constants come from external data read them from their files just before
  // each run (and drop them after), giving the same bits as a plan that holds them.
  const std::string& streaming_note() const;

  // Values to keep and return besides the graph outputs (qonnx's expose-intermediates).
  Status expose(const std::vector<std::string>& names);

  // With --batch / --input-shape the declared dims are a default, not a contract: only dtypes are checked.
  void set_check_input_shapes(bool check) { check_input_shapes_ = check; }

  // Inputs by graph-input name; every runtime input must be given.
  Result<RunResult> run(const std::map<std::string, Tensor>& inputs) const;

  // One graph's schedule (the main graph, or a body: planned once, run per iteration).
  struct Plan;

 private:
  const ir::Model* model_ = nullptr;
  const KernelRegistry* registry_ = nullptr;
  std::shared_ptr<Plan> plan_;
  std::vector<std::string> exposed_;
  Arithmetic arithmetic_ = Arithmetic::kInt;
  bool check_input_shapes_ = true;
  // Released intermediate buffers, reused by the next outputs of this and later runs.
  std::shared_ptr<BufferPool> pool_ = std::make_shared<BufferPool>();
};

// Nodes in an order where producers come first (stored order where possible); error on a cycle.
Result<std::vector<const ir::Node*>> topological_order(const ir::Graph& graph);

// What planning checks without planning: every graph (bodies included) is acyclic and every node has a
// kernel that accepts its attributes. No initializer is decoded and nothing runs, so `check` stays
// small on models of any size.
Status check_plannable(const ir::Model& model, const KernelRegistry& registry = KernelRegistry::global());

// Runs one node's kernel on the given inputs (constant folding uses this, as the executor does).
Result<std::vector<Tensor>> evaluate_node(const ir::Model& model, const ir::Node& node,
                                          const std::vector<const Tensor*>& inputs,
                                          const KernelRegistry& registry = KernelRegistry::global());

// Checks a user-supplied input against the graph's declared type: dtype and (optionally) fixed dims.
Status check_input_against_declared(const ir::Graph& graph, const ir::Value* input, const Tensor& tensor,
                                    bool check_shape = true);

}  // namespace qonnx::exec
