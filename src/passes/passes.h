// Factories of the built-in passes (one file per pass).
#pragma once

#include <memory>

#include "qonnx/pass/pass.h"

namespace qonnx::passes {

std::unique_ptr<pass::Pass> make_fold_constants();
std::unique_ptr<pass::Pass> make_fold_quant_weights();
std::unique_ptr<pass::Pass> make_cleanup();
std::unique_ptr<pass::Pass> make_infer_shapes();

// Shared by the folding passes: the node's inputs when all are constant (initializers that are not
// overridable graph inputs), else nullopt.
std::optional<std::vector<Tensor>> constant_inputs(const ir::Graph& graph, const ir::Node& node);

}  // namespace qonnx::passes
