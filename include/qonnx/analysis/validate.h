// `check`: everything qonnx-cc can verify about a model without running it.
#pragma once

#include "qonnx/ir/model.h"
#include "qonnx/support/status.h"

namespace qonnx::analysis {

// ONNX checker (where the installed library applies), a kernel for every node, an acyclic graph,
// and valid constant quantizer parameters (bit width, scale, rounding mode).
Status validate_model(const ir::Model& model);

}  // namespace qonnx::analysis
