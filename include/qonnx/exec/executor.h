// Executes a model with the registry kernels: plans once (topological order, kernel lookup,
// last use of every value so buffers are released early), then runs any number of input sets.
#pragma once

#include <map>
#include <string>
#include <vector>

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

  // Values to keep and return besides the graph outputs (qonnx's expose-intermediates).
  Status expose(const std::vector<std::string>& names);

  // Inputs by graph-input name; every runtime input must be given.
  Result<RunResult> run(const std::map<std::string, Tensor>& inputs) const;

 private:
  struct Step {
    const ir::Node* node;
    KernelFn fn;
    int64_t version;
    std::vector<int> release;  // value ids whose last use is this step
  };
  const ir::Model* model_ = nullptr;
  std::vector<Step> steps_;
  std::vector<bool> keep_;  // value id -> never released
  std::vector<std::string> exposed_;
};

// Checks a user-supplied input against the graph's declared type: dtype and fixed dims.
Status check_input_against_declared(const ir::Graph& graph, const ir::Value* input, const Tensor& tensor);

}  // namespace qonnx::exec
