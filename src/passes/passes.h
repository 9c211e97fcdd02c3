// Factories of the built-in passes (one file per pass).
#pragma once

#include <memory>

#include "qonnx/pass/pass.h"

namespace qonnx::passes {

std::unique_ptr<pass::Pass> make_fold_constants();
std::unique_ptr<pass::Pass> make_fold_quant_weights();
std::unique_ptr<pass::Pass> make_cleanup();
std::unique_ptr<pass::Pass> make_infer_shapes();
std::unique_ptr<pass::Pass> make_lower_quant();
std::unique_ptr<pass::Pass> make_upgrade_opset();
std::unique_ptr<pass::Pass> make_lower_custom_ops();
std::unique_ptr<pass::Pass> make_ascend_quant_matmul();

// Whether a value is an initializer the passes may treat as constant. Initializers that are also
// graph inputs (old exporters list every weight there) are defaults a caller could override:
// generic folding leaves them alone, the quantizer passes treat them as the weights they are.
bool is_constant(const ir::Value* v, bool include_overridable);

// The node's inputs when all are constant in that sense, else nullopt.
std::optional<std::vector<Tensor>> constant_inputs(const ir::Graph& graph, const ir::Node& node,
                                                   bool include_overridable);

}  // namespace qonnx::passes
