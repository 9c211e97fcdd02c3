// ONNX OpSchemas for the QONNX domains, so the ONNX checker and shape inference work through
// quantized graphs. Registration is idempotent.
#pragma once

namespace qonnx::schemas {

void register_qonnx_schemas();
void register_ngraph_schemas();
void register_ascend_schemas();

}  // namespace qonnx::schemas
