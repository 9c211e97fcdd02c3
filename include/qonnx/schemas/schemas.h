// ONNX OpSchemas for the QONNX domains, so the ONNX checker and shape inference work through
// quantized graphs. Registration is idempotent.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "qonnx/exec/kernel.h"

namespace qonnx::schemas {

void register_qonnx_schemas();
void register_ngraph_schemas();
void register_ascend_schemas();
// Schemas for ops that upgrade-opset rewrites itself and parks in `domain` (version 1) while ONNX's
// version converter runs: any inputs and attributes, output 0 typed and shaped like input 0, so the
// checker accepts them and shape inference passes through them.
void register_parked_schemas(const char* domain, const std::vector<std::string>& ops);

// ONNX type constraints of `node` at `version` for the executor (KernelRegistry::set_type_checks): an
// element type outside the schema's allowed set, or two types bound to one type parameter, is an invalid
// model naming the node, the input or output, the types and the constraint.
exec::TypeCheck type_check_for(const ir::Node& node, int64_t version);

}  // namespace qonnx::schemas
