// `check`: everything qonnx-cc can verify about a model without running it.
#pragma once

#include <string>
#include <vector>

#include "qonnx/ir/model.h"
#include "qonnx/support/status.h"

namespace qonnx::analysis {

// ONNX checker (where the installed library applies), a kernel for every node, an acyclic graph,
// and valid constant quantizer parameters (bit width, scale, rounding mode).
Status validate_model(const ir::Model& model);

// Ops neither ONNX (at the model's opset for the domain) nor qonnx-cc (a kernel) knows, as
// "domain::op", once each in model order: passes leave them alone and exec cannot run them.
std::vector<std::string> unknown_ops(const ir::Model& model);

}  // namespace qonnx::analysis
