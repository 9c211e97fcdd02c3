// ONNX OpSchemas for the QONNX domains, so the ONNX checker and shape inference work through
// quantized graphs. Registration is idempotent.
#pragma once

#include <string>
#include <vector>

namespace qonnx::schemas {

void register_qonnx_schemas();
void register_ngraph_schemas();
void register_ascend_schemas();
// Schemas for ops that upgrade-opset rewrites itself and parks in `domain` (version 1) while ONNX's
// version converter runs: any inputs and attributes, output 0 typed and shaped like input 0, so the
// checker accepts them and shape inference passes through them.
void register_parked_schemas(const char* domain, const std::vector<std::string>& ops);

}  // namespace qonnx::schemas
