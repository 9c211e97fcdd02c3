// qonnx's execute_onnx on qonnx-cc's kernels: an execution context of named tensors that the caller
// seeds, the graph's nodes [begin, end) run one at a time in stored order, and qonnx's
// sanitize_quant_values (finn_datatype annotations) applied to each node's inputs and outputs.
// Whole-graph runs without anything to sanitize are faster through Executor (same kernels, same bits).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "qonnx/exec/kernel.h"
#include "qonnx/ir/model.h"
#include "qonnx/support/status.h"
#include "qonnx/tensor.h"

namespace qonnx::exec {

struct ContextRunOptions {
  size_t begin = 0;             // first node (stored order)
  size_t end = SIZE_MAX;        // one past the last node; clamped to the node count
  bool sanitize = true;         // qonnx's SANITIZE_QUANT_TENSORS (default 1)
  double error_threshold = 1e-2;  // qonnx's ERROR_THRESH: the largest rounding sanitize may apply
};

struct ContextRunResult {
  std::map<std::string, Tensor> context;
  // (tensor, datatype) that sanitize rounded, in the order it did (qonnx warns for each).
  std::vector<std::pair<std::string, std::string>> rounded;
};

// empty_context updated with `given` (a tensor for a name that is not a value of the graph is ignored,
// as qonnx does; one whose dims differ from a static declared shape, or whose dtype differs from the
// declared one, is a usage error), then nodes [begin, end) run. Errors name the node; a node with a body (If, Loop,
// Scan) is unsupported here.
Result<ContextRunResult> run_in_context(const ir::Model& model, const std::map<std::string, Tensor>& given,
                                        const ContextRunOptions& options,
                                        const KernelRegistry& registry = KernelRegistry::global());

// Whether qonnx's sanitizing could apply: some value of the main graph carries an integer
// finn_datatype annotation (INTk, UINTk, BINARY, BIPOLAR, TERNARY: the types qonnx sanitizes).
bool has_datatype_annotations(const ir::Graph& graph);

// qonnx's make_empty_exec_context: zeros of the declared type for every graph input, output and
// value_info entry (a symbolic or unknown dim as 0, no shape as a scalar; entries no node uses
// included), then the initializers.
Result<std::map<std::string, Tensor>> empty_context(const ir::Graph& graph);

}  // namespace qonnx::exec
